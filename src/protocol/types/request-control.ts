import * as v from "valibot";
import { RpcIdSchema } from "../ids.ts";

export const RequestCancelParamsSchema = v.strictObject({ requestId: RpcIdSchema });
export const RequestCancelStatusSchema = v.picklist(["requested", "alreadyRequested", "notFound"]);
export const RequestCancelResultSchema = v.strictObject({ requestId: RpcIdSchema, status: RequestCancelStatusSchema });
