/**
 * A uPlot chart (bundled, with its stylesheet) that fills its box's width and follows it. The
 * canvas says nothing to a screen reader: `label` does, and the page shows the figures as text.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
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
  const scheme = useColourScheme();
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const plot = new uPlot(
      { ...inPageColours(options), width: Math.max(element.clientWidth, 200), height },
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
  }, [options, data, height, scheme]);
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

const darkQuery = '(prefers-color-scheme: dark)';

/** `dark` or `light`, as the system asks now (a chart is drawn anew when it changes). */
function useColourScheme(): 'dark' | 'light' {
  const query = matchMedia(darkQuery);
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const changed = (event: MediaQueryListEvent) => setDark(event.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return dark ? 'dark' : 'light';
}

/**
 * The options with their axes drawn in the page's colours (the canvas takes no CSS): the labels
 * in its text colour, the grid and ticks in its line colour (an axis's own colours win); and a
 * series coloured `var(--…)` in that custom property's value.
 */
function inPageColours(options: ChartOptions): ChartOptions {
  const style = getComputedStyle(document.documentElement);
  const ink = style.getPropertyValue('--ink').trim() || '#1b2330';
  const line = style.getPropertyValue('--chart-grid').trim() || '#c9d1dc';
  const axes = options.axes ?? [{}, {}];
  // A series coloured `var(--name)` takes the property's value now.
  const resolve = <T,>(colour: T): T =>
    typeof colour === 'string' && colour.startsWith('var(')
      ? (style.getPropertyValue(colour.slice(4, -1)).trim() as T)
      : colour;
  return {
    ...options,
    series: options.series.map((series) => ({
      ...series,
      ...(series.stroke === undefined ? {} : { stroke: resolve(series.stroke) }),
      ...(series.fill === undefined ? {} : { fill: resolve(series.fill) }),
    })),
    axes: axes.map((axis) => ({
      stroke: ink,
      grid: { stroke: line, width: 1 },
      ticks: { stroke: line, width: 1 },
      ...axis,
    })),
  };
}
