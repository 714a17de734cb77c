/**
 * A uPlot chart (bundled, with its stylesheet) that fills its box's width and follows it. The
 * canvas says nothing to a screen reader: `label` does, and the page shows the figures as text.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** A chart's options but its size, which follows its box. */
export type ChartOptions = Omit<uPlot.Options, 'width' | 'height'>;

interface ChartProps {
  /** What the chart shows, in words (its accessible name). */
  label: string;
  options: ChartOptions;
  data: uPlot.AlignedData;
  height?: number;
}

export function Chart({ label, options, data, height = 220 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const plot = new uPlot(
      { ...options, width: Math.max(element.clientWidth, 200), height },
      data,
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(element.clientWidth, 200), height }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [options, data, height]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}

/** Bars of several series stacked (each drawn as the sum of it and those below it, top first). */
export function stackedBars(seriesValues: number[][]): {
  stacked: number[][];
  bars: uPlot.Series.PathBuilder;
} {
  const sums = seriesValues[0]?.map(() => 0) ?? [];
  const stacked = seriesValues.map((values) =>
    values.map((value, index) => (sums[index] = (sums[index] ?? 0) + value)),
  );
  return { stacked, bars: uPlot.paths.bars!({ size: [0.8, 60] }) };
}
