/** Stops every local-stack service recorded in .data/<svc>.pid, whichever process started it. */
import { stopStack } from './stack.js';

const stopped = await stopStack();
console.log(stopped.length ? `stopped: ${stopped.join(', ')}` : 'nothing was running');
