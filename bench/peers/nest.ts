/**
 * Peer: NestJS on Express (the framework of the original implementation), with its defaults.
 * Decorators are applied as calls, exactly what the TypeScript compiler emits for them, so this
 * file needs neither experimentalDecorators nor emitDecoratorMetadata (nothing is injected).
 */
import "reflect-metadata"
import { BadRequestException, Body, Controller, Get, Module, NotFoundException, Param, Post, Res } from "@nestjs/common"
import { NestFactory } from "@nestjs/core"
import type { NestExpressApplication } from "@nestjs/platform-express"
import { createReadStream } from "node:fs"
import type { ServerResponse } from "node:http"
import { pipeline } from "node:stream"
import { badRequest, BadInput, document, health, ingest, type IngestBody, listTasks, maxBodyBytes, notFound, port, upload, type UploadBody } from "./common.js"

const badInput = (e: unknown): never => {
  throw e instanceof BadInput ? new BadRequestException(badRequest(e.message)) : e
}

class BenchController {
  health() {
    return health
  }

  async listTasks(entityId: string) {
    const list = await listTasks(entityId)
    if (list === undefined) throw new NotFoundException(notFound("Entity not found"))
    return list
  }

  async upload(taskId: string, body: UploadBody) {
    const result = await upload(taskId, body).catch(badInput)
    if (result === undefined) throw new NotFoundException(notFound("Task not found"))
    return result
  }

  download(documentRef: string, res: ServerResponse) {
    if (document === undefined || documentRef !== document.id) throw new NotFoundException(notFound("Document not found"))
    res.writeHead(200, document.headers)
    pipeline(createReadStream(document.file), res, () => {})
  }

  async ingest(taskId: string, body: IngestBody) {
    const result = await ingest(taskId, body).catch(badInput)
    if (result === undefined) throw new NotFoundException(notFound("Task not found"))
    return result
  }
}

const method = (key: keyof BenchController, ...decorators: Array<MethodDecorator>) => {
  const proto = BenchController.prototype
  for (const decorate of decorators) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, key)!
    const next = decorate(proto, key, descriptor)
    if (next !== undefined) Object.defineProperty(proto, key, next)
  }
}
const params = (key: keyof BenchController, ...decorators: Array<ParameterDecorator>) =>
  decorators.forEach((decorate, index) => decorate(BenchController.prototype, key, index))

Controller("v1")(BenchController)
method("health", Get("health"))
method("listTasks", Get("entities/:entityId/tasks"))
params("listTasks", Param("entityId"))
method("upload", Post("tasks/:taskId/files"))
params("upload", Param("taskId"), Body())
method("download", Get("tasks/:taskId/files/:documentRef/download"))
params("download", Param("documentRef"), Res())
method("ingest", Post("tasks/:taskId/data/ingest"))
params("ingest", Param("taskId"), Body())

class AppModule {}
Module({ controllers: [BenchController] })(AppModule)

const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: false, bodyParser: false })
app.useBodyParser("json", { limit: maxBodyBytes })
await app.listen(port, "127.0.0.1")
