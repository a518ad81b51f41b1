/** The signal a FILE_UPLOAD step's submit_file action names; receiving it with the file completes the step. */
export const FILE_SUBMITTED_SIGNAL = "file_submitted"

/** The signal a row action sends (with `kind: "row_action"` in its payload). */
export const ROW_ACTION_SIGNAL = "user_action"
