/**
 * The logger every layer uses. Backed by pino: JSON lines, or human-readable lines through pino-pretty
 * running in-process (no worker transport, so it also works inside worker threads).
 */
import { pino } from 'pino';
import pretty from 'pino-pretty';

export interface Logger {
  debug(objOrMsg: object | string, msg?: string): void;
  info(objOrMsg: object | string, msg?: string): void;
  warn(objOrMsg: object | string, msg?: string): void;
  error(objOrMsg: object | string, msg?: string): void;
  /** a logger that adds `bindings` to every line */
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerConfig {
  /** debug | info | warn | error, or silent */
  level: string;
  /** human-readable lines; default: when stdout is a TTY */
  pretty?: boolean;
  /** where JSON lines go instead of stdout (tests); `pretty` is then ignored */
  destination?: { write(line: string): void };
}

/**
 * Fields whose values are replaced before a line is written, at the top level and one level down:
 * a safety net — key material must not be passed to the logger in the first place.
 */
const SECRET_FIELDS = ['privateKey', 'private_key', 'priv_key', 'privKey', 'mnemonic', 'password', 'passphrase', 'secret', 'seed'];
const REDACT_PATHS = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]);
const REDACTED = '[redacted]';
const STDOUT_FD = 1;

export function createLogger(config: LoggerConfig): Logger {
  const usePretty = config.pretty ?? process.stdout.isTTY === true;
  const options = {
    level: config.level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const destination =
    config.destination ??
    (usePretty
      ? pretty({ colorize: true, sync: true, destination: STDOUT_FD, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : pino.destination({ dest: STDOUT_FD, sync: true }));
  return pino(options, destination);
}

/** A logger that drops everything. */
export const silentLogger: Logger = pino({ level: 'silent' });
