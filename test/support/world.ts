/** The example fixture's ids, named for what they are in tests. */
export const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
export const GLOBEX = "092cb321-0fda-45f1-9acc-c3d163fb36c4"
export const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
export const ACME_UK = "3acc7ce9-d0bf-431a-9528-aa340456a628"
export const GLOBEX_US = "40b0f59f-adbf-4d1b-ba2a-434dde6e06ec"
/** IN_PROGRESS, current step review_expenses (TABLE_REVIEW). */
export const EXPENSE_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
export const COMPLETED_TASK = "265fdb4b-c9ea-44db-93d8-1c27517764ea"
/** IN_PROGRESS on a workflow whose runbook is null: its next-step lookup fails. */
export const LEGACY_TASK = "ed72715d-2c77-4cba-8a95-97d1c1a27029"
export const GLOBEX_TASK = "8c7e8451-53ea-4be2-b7d9-5f62e255030e"
export const ROW_NEEDS_ATTENTION = "0349944d-fb03-40cf-a73a-21b10c2a61e9"
export const ROW_REJECTED = "eff2b18c-a2fe-42cb-8fdb-bf71a794b101"
export const GLOBEX_ROW = "40f46d23-e24b-4c5e-b5bc-bc1878ba74cf"
export const DOCUMENT = "7eaa8264-3830-4a32-ab40-c343ff3a2de5"
export const MISSING = "00000000-0000-4000-8000-000000000000"
