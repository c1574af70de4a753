import { serviceNames, type ServiceName } from "@analytics/contracts";

/** Every service of the registry at one URL (nothing listens on port 9: each call fails at once). */
export const allServicesAt = (url = "http://127.0.0.1:9") => Object.fromEntries(serviceNames.map((name) => [name, url])) as Record<ServiceName, string>;

/** /healthz checks when the database answers `database` and no service does. */
export const noServiceReady = (database: boolean) => ({ database, ...Object.fromEntries(serviceNames.map((name) => [name, false])) });
