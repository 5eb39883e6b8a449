import documents from "../../src/protocol/generated/drivers/mock-actions.json" with { type: "json" };
import { ActionSpace } from "../../src/driver/action-space.ts";
import { MOCK_CONTRACTS } from "./action-contracts.ts";

/** What the Mock advertises and validates calls against. */
export const MOCK_ACTIONS = new ActionSpace(MOCK_CONTRACTS, documents);
