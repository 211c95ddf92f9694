package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
)

// nullInt64 is an optional id column: nil for NULL.
func nullInt64(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// callVariables reads a call's variables column (a JSON object of
// strings, "{}" for a call of no campaign) as nil when it holds none, so
// that calls without variables show none.
func callVariables(callID int64, column string) (map[string]string, error) {
	if column == "" || column == "{}" {
		return nil, nil
	}
	var vars map[string]string
	if err := json.Unmarshal([]byte(column), &vars); err != nil {
		return nil, fmt.Errorf("call %d variables: %w", callID, err)
	}
	if len(vars) == 0 {
		return nil, nil
	}
	return vars, nil
}
