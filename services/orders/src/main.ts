import { runServiceMain } from "@analytics/rpc";
import { startOrdersService } from "./service";

void runServiceMain("orders", startOrdersService, 50054);
