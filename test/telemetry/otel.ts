/**
 * OpenTelemetry for the tracing tests: an in-memory span exporter, a metric reader collected on demand,
 * and the async context manager an app's NodeSDK registers (the SDK follows a call by its context).
 */
import { type Attributes, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll } from 'vitest';

/** A reader whose only export is `collect()`. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** Registers the context manager once for the test file. */
export function useContext(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

/**
 * For the whole test file: the context manager, and a global tracer provider (the one the queue's and
 * the webhook's telemetry use) exporting to the returned in-memory exporter; undone after the file.
 */
export function useGlobalSpans(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    useContext();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
  });
  afterAll(() => {
    trace.disable();
  });
  return exporter;
}

/** Providers that keep what they get, for one test. */
export function telemetry() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    async metrics(): Promise<ResourceMetrics> {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics;
    },
    /** The points of the metric `name`: their attributes and value (a sum, or a histogram's count). */
    async points(name: string): Promise<{ attributes: Attributes; value: number }[]> {
      const all = (await this.metrics()).scopeMetrics.flatMap((s) => s.metrics);
      const metric = all.find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? []).map((p) => ({
        attributes: p.attributes,
        value: typeof p.value === 'number' ? p.value : (p.value as { count: number }).count,
      }));
    },
  };
}

/** Every string an exported span holds in an attribute, an event's attributes or a link's. */
export function everyAttributeValue(spans: readonly ReadableSpan[]): string[] {
  const values: string[] = [];
  const add = (attributes: Attributes | undefined) => {
    for (const value of Object.values(attributes ?? {})) values.push(JSON.stringify(value));
  };
  for (const span of spans) {
    values.push(span.name, span.status.message ?? '');
    add(span.attributes);
    for (const event of span.events) {
      values.push(event.name);
      add(event.attributes);
    }
    for (const link of span.links) add(link.attributes);
  }
  return values;
}

/** Every value a metric data point holds in its attributes. */
export function everyMetricAttributeValue(metrics: ResourceMetrics): string[] {
  return metrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((metric) =>
      metric.dataPoints.flatMap((point) =>
        Object.values(point.attributes).map((value) => JSON.stringify(value)),
      ),
    ),
  );
}
