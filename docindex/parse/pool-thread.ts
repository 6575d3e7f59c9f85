/**
 * A parse thread (pool.ts): parses the files it is sent, one at a time, with the grammars they need loaded once per
 * thread. A failure answers an error, and the pool parses that file itself.
 */
import { parentPort } from 'node:worker_threads';
import { withCodeWords } from './code-words.js';
import { loadSourceGrammars, parseFile } from './parse.js';
import type { ParseReply, ParseRequest } from './pool.js';

let queue = Promise.resolve();

parentPort!.on('message', (msg: ParseRequest) => {
  // Grammars load asynchronously: files wait their turn so the replies keep the order they were sent in.
  queue = queue.then(async () => {
    let reply: ParseReply;
    try {
      await loadSourceGrammars([msg.filePath]);
      reply = { id: msg.id, snippets: withCodeWords(parseFile(msg.filePath, msg.content)) };
    } catch (err) {
      reply = { id: msg.id, error: (err as Error).message };
    }
    parentPort!.postMessage(reply);
  });
});
