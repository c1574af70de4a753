import { runServiceMain } from "@analytics/rpc";
import { startPlanningService } from "./service";

void runServiceMain("planning", startPlanningService, 50056);
