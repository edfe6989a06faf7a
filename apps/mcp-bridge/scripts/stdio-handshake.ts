/**
 * One MCP session over stdio with a freshly spawned process, as a client starts one: `initialize`,
 * `notifications/initialized`, `tools/list`, then stdin closed (an MCP stdio server exits then).
 * The build's warm-up (build.ts) and the cold-start benchmark (bench/bridge.ts) both run it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** How the session ended. */
export interface Handshake {
  /** Tools listed. */
  tools: number;
  /** Exit code, or null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Everything the process wrote to stderr. */
  stderr: string;
}

/**
 * Spawns `node <args>` with `env` and runs the session; `onListed` runs when tools/list is
 * answered, while the process still lives (e.g. to time it). A process still alive 5 s after
 * stdin closed is killed. Rejects on a JSON-RPC error, when the process exits before answering
 * tools/list, or when no answer comes within 30 s (naming `args` and the end of stderr).
 */
export function listToolsOverStdio(
  args: readonly string[],
  env: Record<string, string | undefined>,
  clientName: string,
  onListed: (child: ChildProcessWithoutNullStreams, tools: number) => void = () => {},
): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let tools: number | null = null;
    const fail = (message: string): void => reject(new Error(`${message}: node ${args.join(' ')}\n${stderr.slice(-2000)}`));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail('no tools/list answer within 30 s');
    }, 30_000);
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (let newline = stdout.indexOf('\n'); newline >= 0; newline = stdout.indexOf('\n')) {
        const message = JSON.parse(stdout.slice(0, newline)) as { id?: number; result?: { tools?: unknown[] }; error?: unknown };
        stdout = stdout.slice(newline + 1);
        if (message.error) {
          child.kill('SIGKILL');
          return fail(`JSON-RPC error ${JSON.stringify(message.error)}`);
        }
        if (message.id === 1) {
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
        } else if (message.id === 2 && tools === null) {
          tools = message.result?.tools?.length ?? 0;
          onListed(child, tools);
          child.stdin.end();
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        }
      }
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (tools === null) return fail(`exited (${signal ?? code}) before answering tools/list`);
      resolve({ tools, code, signal, stderr });
    });
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: clientName, version: '0' } } });
  });
}
