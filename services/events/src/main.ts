import { runServiceMain } from "@analytics/rpc";
import { migrations } from "./migrations";
import { startEventsService } from "./service";

void runServiceMain("events", startEventsService, 50055, migrations);
