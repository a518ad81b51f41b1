/**
 * The one rule of which files a FILE_UPLOAD step admits (src/api/fileAccept.ts), read as the HTML
 * `accept` attribute; the console and the gateway both decide with it.
 */
import { describe, expect, it } from "vitest"
import { acceptedTypes, isAccepted } from "../../src/api/fileAccept.js"
import { readFileSync } from "node:fs"

describe("acceptedTypes", () => {
  it("reads an array or a comma list, trimmed; nothing else names types", () => {
    expect(acceptedTypes({ accept: ["application/pdf", " image/png ", 3, ""] })).toEqual(["application/pdf", "image/png"])
    expect(acceptedTypes({ accept: ".csv, text/csv,," })).toEqual([".csv", "text/csv"])
    expect(acceptedTypes({ accept: { pdf: true } })).toEqual([])
    expect(acceptedTypes({})).toEqual([])
    expect(acceptedTypes(undefined)).toEqual([])
  })
})

describe("isAccepted", () => {
  const cases: ReadonlyArray<readonly [name: string, type: string | undefined, accepted: ReadonlyArray<string>, admitted: boolean]> = [
    ["a.exe", "application/x-msdownload", [], true],
    ["scan.pdf", "application/pdf", ["application/pdf", "image/png"], true],
    ["scan.pdf", "APPLICATION/PDF", ["application/pdf"], true],
    ["scan", "text/csv; charset=utf-8", ["text/csv"], true],
    ["scan.pdf", "text/html", ["application/pdf"], false],
    ["notes.txt", "text/plain", ["application/pdf", "image/png"], false],
    ["photo.JPG", "", [".jpg"], true],
    ["photo.jpg.exe", "", [".jpg"], false],
    ["photo", "image/jpeg", ["image/*"], true],
    ["photo", "imagex/jpeg", ["image/*"], false],
    ["x", "", ["image/*", "application/pdf"], false],
    ["x", undefined, ["*/*"], true],
    ["x", "application/octet-stream", ["application/pdf"], false]
  ]
  it.each(cases)("%s (%s) against %j: %s", (name, type, accepted, admitted) => {
    expect(isAccepted({ name, type }, accepted)).toBe(admitted)
  })

  it("is the function the console checks with (it cannot load outside a browser, so its source is read)", () => {
    const source = readFileSync(new URL("../../src/console/FileUpload.tsx", import.meta.url), "utf8")
    expect(source).toMatch(/import \{ acceptedTypes as acceptedOf, isAccepted \} from "\.\.\/api\/fileAccept\.js"/)
    expect(source).not.toMatch(/endsWith\(|startsWith\(/)
  })
})
