import { describe, expect, it } from "vitest"
import { until, waitFor, WaitTimedOut } from "./waitFor.js"

describe("waitFor", () => {
  it("returns the first value the check gives that is not undefined or false", async () => {
    let looks = 0
    expect(await waitFor("the third look", () => (++looks >= 3 ? `look ${looks}` : undefined), { everyMs: 1 })).toBe("look 3")
    expect(await until(() => 0, { everyMs: 1 })).toBe(0)
  })

  it("names the wait, its time, its looks and what it saw last when it runs out", async () => {
    const error = await waitFor("the task to reach sign_off", () => false, {
      timeoutMs: 30,
      everyMs: 5,
      seen: () => "current step: review"
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaitTimedOut)
    expect((error as Error).message).toMatch(/^waited 30 ms \(\d+ looks\) for: the task to reach sign_off; last value: false\ncurrent step: review$/)
  })

  it("names an unnamed wait by the check's own source", async () => {
    const walSize = () => 4096
    const error = await until(() => walSize() === 0, { timeoutMs: 10, everyMs: 5 }).catch((e: unknown) => e)
    expect((error as Error).message).toContain("for: () => walSize() === 0;")
  })
})
