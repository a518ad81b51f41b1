/**
 * Peer: Fastify 5 with its defaults (JSON schema-less routes, its own JSON body parser).
 */
import Fastify from "fastify"
import { createReadStream } from "node:fs"
import { badRequest, BadInput, document, health, ingest, type IngestBody, listTasks, maxBodyBytes, notFound, port, upload, type UploadBody } from "./common.js"

const app = Fastify({ logger: false, bodyLimit: maxBodyBytes })

app.setErrorHandler((error, _request, reply) => {
  void reply.code(error instanceof BadInput ? 400 : (error as { statusCode?: number }).statusCode ?? 500).send(badRequest(String(error)))
})

app.get("/v1/health", async () => health)

app.get<{ Params: { entityId: string } }>("/v1/entities/:entityId/tasks", async (request, reply) => {
  const list = await listTasks(request.params.entityId)
  return list === undefined ? reply.code(404).send(notFound("Entity not found")) : list
})

app.post<{ Params: { taskId: string }; Body: UploadBody }>("/v1/tasks/:taskId/files", async (request, reply) => {
  const result = await upload(request.params.taskId, request.body)
  return result === undefined ? reply.code(404).send(notFound("Task not found")) : reply.code(201).send(result)
})

app.get<{ Params: { taskId: string; documentRef: string } }>(
  "/v1/tasks/:taskId/files/:documentRef/download",
  async (request, reply) => {
    if (document === undefined || request.params.documentRef !== document.id) return reply.code(404).send(notFound("Document not found"))
    return reply.headers(document.headers).send(createReadStream(document.file))
  }
)

app.post<{ Params: { taskId: string }; Body: IngestBody }>("/v1/tasks/:taskId/data/ingest", async (request, reply) => {
  const result = await ingest(request.params.taskId, request.body)
  return result === undefined ? reply.code(404).send(notFound("Task not found")) : reply.code(201).send(result)
})

await app.listen({ port, host: "127.0.0.1" })
