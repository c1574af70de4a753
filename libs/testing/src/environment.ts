import { randomBytes } from "node:crypto";
import { TestEnvironment } from "jest-environment-node";
import { killAll, processesWith } from "./run";

/**
 * The node environment, plus: every process a test file starts carries TEST_FILE_TAG (set in the
 * worker's environment while the file runs, so children inherit it however they are spawned),
 * and whatever of them still runs when the file ends is killed, however the file ended: a hook
 * that timed out while a platform was still starting, a test that failed before its cleanup.
 */
export default class TestFileEnvironment extends TestEnvironment {
  private readonly tag = randomBytes(6).toString("hex");

  constructor(...args: ConstructorParameters<typeof TestEnvironment>) {
    super(...args);
    // Both the worker's environment (children spawned without `env`) and the test context's copy of it.
    this.global.process.env.TEST_FILE_TAG = this.tag;
    process.env.TEST_FILE_TAG = this.tag;
  }

  override async teardown(): Promise<void> {
    const left = processesWith("TEST_FILE_TAG", this.tag);
    if (left.length) {
      await killAll(left);
      process.stderr.write(`killed ${left.length} process(es) the test file left running: ${left.map((p) => `${p.pid} ${p.command.slice(0, 80)}`).join("; ")}\n`);
    }
    delete process.env.TEST_FILE_TAG;
    await super.teardown();
  }
}
