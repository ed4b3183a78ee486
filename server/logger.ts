import { pino, type Logger } from 'pino';

/**
 * JSON lines on stdout, one per event: what log collectors expect from a container. Written
 * synchronously, so the line that explains an exit is never lost to process.exit().
 */
export function createLogger(level: string): Logger {
  return pino({ level, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: true }));
}
