import { MOCK_ACTIONS } from "../../../drivers/mock/actions.ts";
import { MockDriver } from "../../../drivers/mock/index.ts";
import { schemaParity } from "../../driver/schema-parity.ts";

schemaParity("mock", { advertised: () => new MockDriver().actions("mock-1"), space: MOCK_ACTIONS });
