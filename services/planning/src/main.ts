import { runServiceMain } from "@analytics/rpc";
import { migrations } from "./migrations";
import { startPlanningService } from "./service";

void runServiceMain("planning", startPlanningService, 50056, migrations);
