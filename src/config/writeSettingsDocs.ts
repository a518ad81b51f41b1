/** `npm run settings:gen`: writes `.env.example` and the README's settings tables from src/config/settings.ts. */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderEnvExample, renderReadme } from "./settingsDocs.js"

const root = (file: string) => fileURLToPath(new URL(`../../${file}`, import.meta.url))

writeFileSync(root(".env.example"), renderEnvExample())
writeFileSync(root("README.md"), renderReadme(readFileSync(root("README.md"), "utf8")))
console.log("wrote .env.example and the settings tables of README.md")
