/** Worker processes for the queue's chaos tests: started with tsx, ready when they say so, killed hard. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

/** A started process and everything it printed so far (stdout and stderr). */
export interface Running {
  child: ChildProcessWithoutNullStreams;
  output: string;
}

/** Starts `node --import tsx script ...args`; resolves once it printed the line `ready`. */
export function startScript(script: string, args: string[]): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: 'pipe' });
  const running: Running = { child, output: '' };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start:\n${running.output}`));
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      running.output += chunk.toString();
      if (/(^|\n)ready\n/.test(running.output)) {
        clearTimeout(timer);
        resolve(running);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      running.output += chunk.toString();
    });
  });
}

/** SIGKILL: the process gets no chance to finish anything. Resolves once it exited. */
export function kill(running: Running): Promise<void> {
  return new Promise((resolve) => {
    if (running.child.exitCode !== null || running.child.signalCode !== null) return resolve();
    running.child.once('exit', () => resolve());
    running.child.kill('SIGKILL');
  });
}

/** SIGSTOP: the process runs nothing until {@link resume}; what it already sent still arrives. */
export function pause(running: Running): void {
  running.child.kill('SIGSTOP');
}

/** SIGCONT: a paused process runs again. */
export function resume(running: Running): void {
  running.child.kill('SIGCONT');
}
