/**
 * A producer's event source may not read as one the gateway writes (`audit`, `workspace`,
 * `agent:...`): besides case, compatibility forms and invisible characters, letters of other
 * scripts drawn like the Latin ones (Cyrillic `аudit`, Greek `wοrkspace`) and a Latin letter
 * with a mark (`AUDİT`) are refused too. Readers trust the store's `origin` mark; the refusal
 * keeps a producer's event from even looking like the record. Sources that merely contain the
 * words, and text in other scripts, stay a producer's.
 */
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { TaskEventDto } from "../../src/api/dtos.js"

const decode = Schema.decodeUnknownExit(TaskEventDto)
const event = (source: string) => ({ type: "step.note", source, seq: 1, payload: {} })

describe("reserved event sources", () => {
  it.each([
    ["\u0430udit", "Cyrillic а"],
    ["\u0410UDIT", "Cyrillic А, upper case"],
    ["w\u043erkspace", "Cyrillic о"],
    ["w\u03bfrkspace", "Greek ο"],
    ["\u051dorkspace", "Cyrillic ԝ"],
    ["wor\u043asp\u0430\u0441\u0435", "Cyrillic к а с е"],
    ["AUD\u0130T", "Turkish İ"],
    ["aud\u0131t", "dotless ı"],
    ["aud\u00edt", "í"],
    ["\u0430g\u0435nt:x", "Cyrillic а е, agent:"],
    ["\u0251udit", "Latin ɑ"],
    ["audit", "itself"],
    ["\uff41\uff55\uff44\uff49\uff54", "full width"]
  ])("refuses %j (%s)", (source) => {
    expect(decode(event(source))._tag).toBe("Failure")
  })

  it.each(["auditor", "workspaces", "worker", "agent", "agents", "erp", "Prüfung", "日本語", "Аудит", "workspace-sync", "ワークスペース"])(
    "takes %j as a producer's",
    (source) => {
      expect(decode(event(source))._tag).toBe("Success")
    }
  )
})
