// socket_file.mjs: connects to a Unix socket file outside its folder with node:net and sends
// what it could steal. Connected: it fails to load. Refused: it is the honest solution.
import net from 'node:net';

const reached = await new Promise((resolve) => {
  const socket = net.createConnection({ path: '@SOCKET@' });
  socket.on('connect', () => socket.end('stolen', () => resolve(true)));
  socket.on('error', () => resolve(false));
});
if (reached) throw new Error('socket_file: connected to @SOCKET@');

export { DLQConsumer, RetryQueue } from './honest.mjs';
