// The median of some numbers (undefined for none): the statistic every figure here is reported as.
export function median(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The median of some rounds with their range: how every req/s figure is reported. */
export function medianAndRange(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), values };
}
