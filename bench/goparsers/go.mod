module github.com/calsyncd/calsyncd/bench/goparsers

go 1.26.0

require (
	github.com/arran4/golang-ical v0.3.4
	github.com/calsyncd/calsyncd v0.0.0
	github.com/emersion/go-ical v0.0.0-20250329121855-f41e73efc392
)

require (
	github.com/teambition/rrule-go v1.8.2 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/calsyncd/calsyncd => ../..
