package check_test

import (
	"fmt"

	"github.com/calsyncd/calsyncd/internal/check"
)

// Each subscription's verdict is one line.
func ExampleResult_Line() {
	ok := check.Result{ID: "team", OK: true,
		Feed:     check.Feed{URL: "https://calendar.example.com/…", Status: 200, Bytes: 49357, Events: 120, Skipped: []check.Skip{{UID: "x"}}, SkippedTotal: 1},
		Account:  check.Account{Identity: "service account calsyncd@p.iam.gserviceaccount.com"},
		Calendar: check.Calendar{ID: "team@group.calendar.google.com", AccessRole: "writer", Writable: check.WritableYes}}
	failed := check.Result{ID: "rota", Problems: []string{
		`calendar rota@group.calendar.google.com does not exist or is not shared with service account calsyncd@p.iam.gserviceaccount.com → share the calendar with the account ("Make changes to events"), or fix subscriptions[1].calendar`}}
	fmt.Println(ok.Line())
	fmt.Println(failed.Line())
	// Output:
	// team: OK — feed https://calendar.example.com/… answered 200, 48.2 KiB, 120 events (1 skipped); calendar "team@group.calendar.google.com" writable (writer) as service account calsyncd@p.iam.gserviceaccount.com
	// rota: FAIL — calendar rota@group.calendar.google.com does not exist or is not shared with service account calsyncd@p.iam.gserviceaccount.com → share the calendar with the account ("Make changes to events"), or fix subscriptions[1].calendar
}
