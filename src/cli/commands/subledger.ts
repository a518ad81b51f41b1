/** subledger reject / edit: direct row mutations for operations tooling. */
import * as Argument from "effect/cli/Argument"
import * as Effect from "effect/Effect"
import { UpdateSubledgerCellDto } from "../../api/dtos.js"
import { checkPayload, fields, gatewayCommand, parseValue, rowIdArg, group } from "../common.js"

const ledgerArg = Argument.String("ledger").pipe(Argument.withDescription("Subledger name, e.g. expenses"))

const reject = gatewayCommand(
  "reject",
  "Reject a subledger row (expenses: only from NEEDS_ATTENTION)",
  { ledger: ledgerArg, rowId: rowIdArg },
  ({ ledger, rowId }, ctx) =>
    Effect.flatMap(ctx.gateway.subledgers.rejectRow({ path: { ledger, rowId } }), (r) =>
      ctx.output(r, () => fields([["Row", r.rowId], ["Status", r.newStatus]])))
)

const edit = gatewayCommand(
  "edit",
  "Edit one cell of a subledger row; the value is JSON when it parses (190.5, null, true), else text",
  {
    ledger: ledgerArg,
    rowId: rowIdArg,
    field: Argument.String("field").pipe(Argument.withDescription("Column key, e.g. amount_gross")),
    value: Argument.String("value").pipe(Argument.withDescription("New value"))
  },
  ({ field, ledger, rowId, value }, ctx) =>
    Effect.gen(function*() {
      const parsed = yield* parseValue("value", value)
      // Objects and arrays are not scalars: send such text as the string it was typed as.
      const scalar = typeof parsed === "object" && parsed !== null ? value : parsed
      const payload = yield* checkPayload(UpdateSubledgerCellDto, { field, value: scalar }, "subledger edit")
      const r = yield* ctx.gateway.subledgers.updateCell({ path: { ledger, rowId }, payload })
      yield* ctx.output(r, () => fields([["Row", r.rowId], ["Field", r.field], ["Value", JSON.stringify(r.value)]]))
    })
)

export const subledger = group("subledger", "Direct subledger row mutations (bypass the workflow; interactive review uses task row-action)", [reject, edit])
