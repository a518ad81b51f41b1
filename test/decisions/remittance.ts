/** The payment-run workflow's remittance file, as a body that submits it to complete the task's upload step. */
export const remittanceFile = (taskId: string) => ({
  source: "remittance",
  fileName: "remittance.txt",
  contentType: "text/plain",
  data: Buffer.from("paid").toString("base64"),
  signalTaskId: taskId,
  signalName: "file_submitted"
})
