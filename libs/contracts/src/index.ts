// Generated protobuf-es v2 code for every proto under proto/ (npm run gen). Services and the
// gateway import messages and service descriptors from here; nothing else is shared between them.
export * from "./gen/common/v1/common_pb";
export * as catalogueV1 from "./gen/catalogue/v1/catalogue_pb";
export * as eventsV1 from "./gen/events/v1/events_pb";
export { toRestJson, fromRestJson } from "./rest-json";
export { serviceRegistry, serviceNames, serviceUrlVariable, type ServiceName } from "./services";
