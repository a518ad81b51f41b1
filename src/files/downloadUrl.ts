/** The download endpoint's path for a document. */
export const downloadUrl = (taskId: string, documentId: string): string =>
  `/v1/tasks/${encodeURIComponent(taskId)}/files/${documentId}/download`
