/**
 * The webhook deliverer's settings (README "Outbound webhooks"); a bad value stops the start
 * with a message naming the setting:
 * - SVC_WEBHOOK_RETRY_SCHEDULE (`0,5s,5m,30m,2h,5h,10h,10h`, Svix's): the delay before each
 *   attempt, the first after the event, each next after a failure; past the last, the message
 *   has failed.
 * - SVC_WEBHOOK_TIMEOUT_MS (15000): an attempt counts only with a 2xx within this.
 * - SVC_WEBHOOK_URL_ALLOW (empty): `host:port` pairs that may be private (on-premises receivers, tests).
 * - SVC_WEBHOOK_CONCURRENCY (32): attempts in flight at once (4 at most for one subscription).
 * - SVC_WEBHOOK_DISABLE_AFTER_MS (432000000, 5 days): a subscription failing this long is disabled.
 */
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { intSetting } from "../../config/read.js"
import { parseAllowList } from "../../http/outbound/outboundGuard.js"
import {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE,
  parseRetrySchedule,
  type WebhookDeliveryOptions
} from "./webhookDelivery.js"

const refused = (message: string) => Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message })))

export const webhookSettings: Config.Config<Omit<WebhookDeliveryOptions, "publicUrl">> = Config.all({
  retryScheduleMs: Config.String("SVC_WEBHOOK_RETRY_SCHEDULE").pipe(
    Config.withDefault(DEFAULT_WEBHOOK_RETRY_SCHEDULE),
    Config.mapEffect((text) => {
      const parsed = parseRetrySchedule(text)
      return parsed.ok ? Effect.succeed(parsed.value) : refused(`SVC_WEBHOOK_RETRY_SCHEDULE: ${parsed.message}`)
    })
  ),
  timeoutMs: intSetting("SVC_WEBHOOK_TIMEOUT_MS"),
  urlAllow: Config.String("SVC_WEBHOOK_URL_ALLOW").pipe(
    Config.withDefault(""),
    Config.mapEffect((text) => {
      const parsed = parseAllowList(text)
      return Result.isSuccess(parsed) ? Effect.succeed(parsed.success) : refused(`SVC_WEBHOOK_URL_ALLOW: ${parsed.failure}`)
    })
  ),
  concurrency: intSetting("SVC_WEBHOOK_CONCURRENCY"),
  disableAfterMs: intSetting("SVC_WEBHOOK_DISABLE_AFTER_MS")
})
