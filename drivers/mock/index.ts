export { MOCK_PNG, MockDriver, type MockOptions } from "./mock-driver.ts";
