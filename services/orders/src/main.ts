import { runServiceMain } from "@analytics/rpc";
import { migrations } from "./migrations";
import { startOrdersService } from "./service";

void runServiceMain("orders", startOrdersService, 50054, migrations);
