//go:build race

package telephony_test

// raceEnabled: the race detector instruments the pure-Go SQLite too, and
// makes each write many times dearer than in a release build.
const raceEnabled = true
