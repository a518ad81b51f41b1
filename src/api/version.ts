/**
 * The API's version: the package's (package.json), so the OpenAPI documents (`info.version`),
 * the typed client package built from this contract (dist/client) and the gateway name one
 * version. The bundles hold only this field of package.json (scripts/build-version.mjs).
 */
import pkg from "../../package.json" with { type: "json" }

export const API_VERSION: string = pkg.version
