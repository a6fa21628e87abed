// The content processes of a browser a test launched, read from /proc (Linux): Firefox and WebKit
// give a page no measure of its own memory (Chromium's performance.memory), so a test that bounds
// memory there bounds the peak resident size of the processes that run the page and its workers.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The processes under `root` (the browser or its driver, followed through every descendant:
 * sandbox helpers included) whose name starts with one of `names`, each { pid, name, peakBytes }
 * from its VmHWM. A process that ends while it is read is left out.
 *
 * @param {number} root
 * @param {string[]} names as /proc/<pid>/comm has them: cut at 15 characters
 */
export function contentProcesses(root, names) {
  const found = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = /** @type {number} */ (pending.pop());
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // Ended meanwhile.
    }
    for (const task of tasks) {
      try {
        pending.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
      } catch {
        // The thread ended meanwhile.
      }
    }
    try {
      const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      if (!names.some((n) => name.startsWith(n))) continue;
      const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (hwm) found.push({ pid, name, peakBytes: Number(hwm[1]) * 1024 });
    } catch {
      // Ended meanwhile.
    }
  }
  return found;
}
