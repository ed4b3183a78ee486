// What is running, how far along, how long to go. On a terminal one status line is redrawn every
// second; in a log (CI, tests) each step is one plain line, without the per-second noise.

export function formatDuration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * @param {{ stream?: NodeJS.WriteStream, plannedSeconds: number }} options
 */
export function createProgress({ stream = process.stderr, plannedSeconds }) {
  const tty = Boolean(stream.isTTY);
  let remaining = plannedSeconds;
  let label = '';
  let stepEnds = 0;
  let stepSeconds = 0;
  let timer;

  const left = () => remaining + Math.max(0, (stepEnds - Date.now()) / 1000);
  const draw = () => {
    const line = `${label} · ~${formatDuration(left())} left`;
    stream.write(`\r\x1b[2K${line.slice(0, (stream.columns ?? 120) - 1)}`);
  };

  return {
    /**
     * A new step that should take about `seconds`; its time leaves the remaining budget now and
     * counts down while it runs.
     */
    step(text, seconds) {
      remaining = Math.max(0, remaining - seconds);
      label = text;
      stepSeconds = seconds;
      stepEnds = Date.now() + seconds * 1000;
      if (tty) {
        draw();
        clearInterval(timer);
        timer = setInterval(draw, 1000);
        timer.unref();
      } else {
        stream.write(`${text} (${stepSeconds} s, ~${formatDuration(left())} left)\n`);
      }
    },
    /** A line that stays above the status line. */
    log(text) {
      if (tty) stream.write(`\r\x1b[2K${text}\n`);
      else stream.write(`${text}\n`);
      if (tty && label) draw();
    },
    done() {
      clearInterval(timer);
      if (tty) stream.write('\r\x1b[2K');
      label = '';
    },
  };
}
