/**
 * Reads a history JSON file (`temporal workflow show --output json`) into a History message.
 *
 * Not `historyFromJSON` from `@temporalio/common`: in this install `@temporalio/common` and
 * `@temporalio/proto` each nest their own copy of protobufjs (the root holds another major for
 * grpc's proto-loader), and protojson's `instanceof Type` check fails across copies ("type must
 * be a Type"). Using the protobufjs copy that built the proto root avoids it. The CLI's JSON
 * already spells enums in full, so the SDK's enum fix-ups are not needed.
 */
import { createRequire } from 'node:module';

type ProtoJson = {
  fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): unknown;
};
type LookupRoot = { lookupType(name: string): unknown };

const fromHere = createRequire(import.meta.url);
const fromProto = createRequire(fromHere.resolve('@temporalio/proto'));
const protojson = fromProto('protobufjs/ext/protojson') as ProtoJson;
const { patchProtobufRoot } = fromProto('@temporalio/proto/lib/patch-protobuf-root') as {
  patchProtobufRoot: (root: unknown) => LookupRoot;
};
const historyType = patchProtobufRoot(fromProto('@temporalio/proto')).lookupType(
  'temporal.api.history.v1.History',
);

/** The History message of a history file's parsed JSON. */
export function historyFromFile(json: unknown): unknown {
  const history = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
  if (history === null) throw new TypeError('Invalid history file');
  return history;
}
