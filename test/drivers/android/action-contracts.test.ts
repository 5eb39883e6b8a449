import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import { ANDROID_ACTIONS } from "../../../drivers/android/actions.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { schemaParity } from "../../driver/schema-parity.ts";

// The action space needs no device: the driver is never started, so no adb server is asked.
const driver = new AndroidDriver({ adbPath: "adb", serverPort: 1, log: silentLogger });

schemaParity("android", { advertised: () => driver.actions("android-adb:parity"), space: ANDROID_ACTIONS });
