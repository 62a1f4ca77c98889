import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Collects a child's stdout and stderr together, as they come; the getter reads what came so far. */
export function collectOutput(child: ChildProcessWithoutNullStreams): () => string {
  let output = '';
  const add = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', add);
  child.stderr.on('data', add);
  return () => output;
}

/**
 * Runs a TypeScript file in a child process (with tsx) and resolves to its exit code and its output.
 * The child must end by itself: a stray handle would keep it alive, so it is killed after
 * `killAfterMs` and the test sees the kill.
 */
export async function runScript(
  script: URL,
  args: string[] = [],
  killAfterMs = 10_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(script), ...args], {
    stdio: 'pipe',
  });
  const output = collectOutput(child);
  const killer = setTimeout(() => child.kill(), killAfterMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(killer);
  return { code, output: output() };
}
