import { runServiceMain } from "@analytics/rpc";
import { startEventsService } from "./service";

void runServiceMain("events", startEventsService, 50055);
