import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { isAlive } from "../../src/server/daemon-record.ts";

const state = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
};

describe("isAlive", () => {
  test.if(process.platform === "linux")(
    "a running process is alive; an exited one that nobody reaped (a zombie) is not",
    async () => {
      // sh starts `sleep 0` and then becomes `sleep 5`, which never reaps it: the child stays a zombie.
      const parent = Bun.spawn(["sh", "-c", "sleep 0 & echo $!; exec sleep 5"], { stdout: "pipe" });
      try {
        const { value } = await parent.stdout.getReader().read();
        const child = Number(new TextDecoder().decode(value).trim());
        expect(isAlive(parent.pid)).toBe(true);
        const deadline = Date.now() + 3_000;
        while (state(child) !== "Z" && Date.now() < deadline) await Bun.sleep(5);
        expect(state(child)).toBe("Z");
        // The kernel still knows the pid (signal 0 reaches it), yet it runs no more.
        expect(() => process.kill(child, 0)).not.toThrow();
        expect(isAlive(child)).toBe(false);
      } finally {
        parent.kill("SIGKILL");
      }
    },
  );

  test("a pid that does not exist is not alive", () => {
    expect(isAlive(2 ** 22 + 1)).toBe(false);
  });
});
