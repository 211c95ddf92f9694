package store

import (
	"context"

	"github.com/agentline/agentline"
)

// OptOutContact records that the person a campaign contact of the project
// reached asked, on a call, not to be called again (the agent's opt_out
// tool), in one transaction: the contact's number goes on the project's
// do-not-call list with reason (as AddDoNotCall puts it there, so pending
// contacts of other campaigns with that number become do_not_call), and
// the contact itself becomes opted_out with no next attempt.
//
// opted_out is a contact's final status: nothing moves it on. It is set
// whatever status the contact has (calling, while the call lives; or the
// outcome its call's end wrote, when the carrier reported the end first),
// and every other write of a contact's status or next attempt must leave
// an opted_out contact as it is (a condition status <> 'opted_out' on its
// UPDATE): so an opt-out is never turned into a retry by the outcome of
// the call it was made on.
func (db *DB) OptOutContact(ctx context.Context, projectID, contactID int64, reason string) (agentline.DoNotCall, error) {
	var listed agentline.DoNotCall
	err := db.tx(ctx, func(c conn) error {
		var number string
		if err := c.queryRow(ctx, `SELECT phone_number FROM campaign_contacts WHERE project_id = ? AND id = ?`,
			projectID, contactID).Scan(&number); err != nil {
			return notFound(err, "contact")
		}
		var err error
		if listed, _, err = db.listDoNotCall(ctx, c, projectID, agentline.DoNotCall{PhoneNumber: number, Reason: reason}); err != nil {
			return err
		}
		_, err = c.exec(ctx, `UPDATE campaign_contacts SET status = ?, next_attempt_at = NULL, updated_at = ?
			WHERE project_id = ? AND id = ?`, agentline.ContactOptedOut, db.now(), projectID, contactID)
		return err
	})
	return listed, err
}
