package main

import (
	"io"

	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/plan"
)

// printPlanTable is diff.WritePlanTable, for the callers in fleet_plan.go
// (being reworked by another change; they call it by this name).
func printPlanTable(w io.Writer, p *plan.Plan) { diff.WritePlanTable(w, p) }
