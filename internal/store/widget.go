package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

const channelColumns = `id, project_id, agent_id, type, name, settings, created_at, updated_at`

func scanChannel(row interface{ Scan(...any) error }) (agentline.Channel, error) {
	var c agentline.Channel
	var agentID sql.NullInt64
	var settings string
	if err := row.Scan(&c.ID, &c.ProjectID, &agentID, &c.Type, &c.Name, &settings, utc(&c.CreatedAt), utc(&c.UpdatedAt)); err != nil {
		return c, err
	}
	if agentID.Valid {
		c.AgentID = &agentID.Int64
	}
	if err := json.Unmarshal([]byte(settings), &c.Settings); err != nil {
		return c, fmt.Errorf("channel %d settings: %w", c.ID, err)
	}
	return c, nil
}

// CreateChannel stores a new channel in c.ProjectID.
func (db *DB) CreateChannel(ctx context.Context, c agentline.Channel) (agentline.Channel, error) {
	settings, err := json.Marshal(c.Settings)
	if err != nil {
		return c, err
	}
	c.CreatedAt, c.UpdatedAt = db.now(), db.now()
	err = db.tx(ctx, func(tx conn) error {
		if err := tx.queryRow(ctx,
			`INSERT INTO channels (project_id, agent_id, type, name, settings, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.ProjectID, c.AgentID, c.Type, c.Name, string(settings), c.CreatedAt, c.UpdatedAt).Scan(&c.ID); err != nil {
			return err
		}
		return tx.audit(ctx, change(c.ProjectID, "channel.create", "channel", c.ID, agentline.AuditChanges(nil, c)))
	})
	if isForeignKeyViolation(err) {
		return c, agentline.NotFound("project or agent")
	}
	if err != nil {
		return c, fmt.Errorf("create channel: %w", err)
	}
	return c, nil
}

// Channels lists a project's channels.
func (db *DB) Channels(ctx context.Context, projectID int64) ([]agentline.Channel, error) {
	return queryAll(ctx, db.reader(), scanChannel, `SELECT `+channelColumns+` FROM channels WHERE project_id = ? ORDER BY id`, projectID)
}

// Channel returns one channel of the project.
func (db *DB) Channel(ctx context.Context, projectID, channelID int64) (agentline.Channel, error) {
	c, err := scanChannel(db.reader().queryRow(ctx,
		`SELECT `+channelColumns+` FROM channels WHERE project_id = ? AND id = ?`, projectID, channelID))
	return c, notFound(err, "channel")
}

// UpdateChannel saves the editable fields of c, scoped to c.ProjectID.
func (db *DB) UpdateChannel(ctx context.Context, c agentline.Channel) (agentline.Channel, error) {
	settings, err := json.Marshal(c.Settings)
	if err != nil {
		return c, err
	}
	read := func(tx conn) (agentline.Channel, error) {
		ch, err := scanChannel(tx.queryRow(ctx, `SELECT `+channelColumns+` FROM channels WHERE project_id = ? AND id = ?`, c.ProjectID, c.ID))
		return ch, notFound(err, "channel")
	}
	err = db.tx(ctx, func(tx conn) error {
		c, err = updateAudited(ctx, tx, c.ProjectID, "channel.update", "channel", c.ID, read, func(tx conn) error {
			_, err := tx.exec(ctx, `UPDATE channels SET agent_id = ?, name = ?, settings = ?, updated_at = ? WHERE project_id = ? AND id = ?`,
				c.AgentID, c.Name, string(settings), db.now(), c.ProjectID, c.ID)
			return err
		})
		return err
	})
	if isForeignKeyViolation(err) {
		return c, agentline.NotFound("agent")
	}
	return c, err
}

// DeleteChannel deletes a channel of the project and its key.
func (db *DB) DeleteChannel(ctx context.Context, projectID, channelID int64) error {
	return db.deleteOwned(ctx, agentline.KindChannel, projectID, channelID, "channel")
}

const keyColumns = `id, channel_id, project_id, prefix, allowed_origins, rate_limit_per_minute, rate_limit_per_day, created_at, last_used_at`

func scanKey(row interface{ Scan(...any) error }) (agentline.WidgetKey, error) {
	var k agentline.WidgetKey
	var origins string
	var perDay sql.NullInt64
	var lastUsed sql.NullTime
	if err := row.Scan(&k.ID, &k.ChannelID, &k.ProjectID, &k.Prefix, &origins, &k.RateLimitPerMinute, &perDay,
		utc(&k.CreatedAt), &lastUsed); err != nil {
		return k, err
	}
	if perDay.Valid {
		k.RateLimitPerDay = &perDay.Int64
	}
	if lastUsed.Valid {
		t := lastUsed.Time.UTC()
		k.LastUsedAt = &t
	}
	if err := json.Unmarshal([]byte(origins), &k.AllowedOrigins); err != nil {
		return k, fmt.Errorf("widget key %d origins: %w", k.ID, err)
	}
	return k, nil
}

// SetWidgetKey gives the channel a key with this hash: a new key with the
// default limits, or, when the channel has one, the same key record with a
// new hash, so the old key stops working while origins and limits stay.
// change, when not nil, then edits the key's origins and limits; all of it
// is one transaction, so a failure leaves the old key as it was.
func (db *DB) SetWidgetKey(ctx context.Context, projectID, channelID int64, hash, prefix string, edit func(*agentline.WidgetKey) error) (agentline.WidgetKey, error) {
	now := db.now()
	err := db.tx(ctx, func(c conn) error {
		var exists int
		err := c.queryRow(ctx, `SELECT count(*) FROM channels WHERE project_id = ? AND id = ?`, projectID, channelID).Scan(&exists)
		if err != nil {
			return err
		}
		if exists == 0 {
			return agentline.NotFound("channel")
		}
		res, err := c.exec(ctx, `UPDATE widget_keys SET key_hash = ?, prefix = ?, created_at = ?, last_used_at = NULL
			WHERE project_id = ? AND channel_id = ?`, hash, prefix, now, projectID, channelID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		action := "widget_key.rotate"
		if n == 0 {
			action = "widget_key.create"
			_, err = c.exec(ctx, `INSERT INTO widget_keys (channel_id, project_id, key_hash, prefix, allowed_origins, rate_limit_per_minute, created_at)
				VALUES (?, ?, ?, ?, '[]', ?, ?)`, channelID, projectID, hash, prefix, agentline.DefaultRateLimitPerMinute, now)
			if err != nil {
				return err
			}
		}
		if err := c.audit(ctx, change(projectID, action, "widget_key", channelID,
			map[string][2]any{"key": agentline.MaskedChange(action != "widget_key.create", true), "prefix": {nil, prefix}})); err != nil {
			return err
		}
		if edit == nil {
			return nil
		}
		k, err := scanKey(c.queryRow(ctx, `SELECT `+keyColumns+` FROM widget_keys WHERE project_id = ? AND channel_id = ?`, projectID, channelID))
		if err != nil {
			return err
		}
		if err := edit(&k); err != nil {
			return err
		}
		return updateKeySettings(ctx, c, k)
	})
	if err != nil {
		if isUniqueViolation(err) {
			return agentline.WidgetKey{}, agentline.Errorf(agentline.EConflict, "the channel's key changed at the same time; try again")
		}
		return agentline.WidgetKey{}, err
	}
	return db.WidgetKey(ctx, projectID, channelID)
}

// WidgetKey returns the key of a channel of the project.
func (db *DB) WidgetKey(ctx context.Context, projectID, channelID int64) (agentline.WidgetKey, error) {
	k, err := scanKey(db.reader().queryRow(ctx,
		`SELECT `+keyColumns+` FROM widget_keys WHERE project_id = ? AND channel_id = ?`, projectID, channelID))
	return k, notFound(err, "key")
}

// WidgetKeyByHash returns the key whose hash this is. The key itself is the
// scope: whoever holds it may use its channel.
func (db *DB) WidgetKeyByHash(ctx context.Context, hash string) (agentline.WidgetKey, error) {
	k, err := scanKey(db.reader().queryRow(ctx, `SELECT `+keyColumns+` FROM widget_keys WHERE key_hash = ?`, hash))
	return k, notFound(err, "key")
}

// UpdateWidgetKey saves a key's origins and limits.
func (db *DB) UpdateWidgetKey(ctx context.Context, k agentline.WidgetKey) (agentline.WidgetKey, error) {
	read := func(c conn) (agentline.WidgetKey, error) {
		k, err := scanKey(c.queryRow(ctx, `SELECT `+keyColumns+` FROM widget_keys WHERE project_id = ? AND channel_id = ?`, k.ProjectID, k.ChannelID))
		return k, notFound(err, "key")
	}
	var after agentline.WidgetKey
	err := db.tx(ctx, func(c conn) error {
		var err error
		after, err = updateAudited(ctx, c, k.ProjectID, "widget_key.update", "widget_key", k.ChannelID, read, func(c conn) error {
			return updateKeySettings(ctx, c, k)
		})
		return err
	})
	return after, err
}

// updateKeySettings writes a key's origins and limits.
func updateKeySettings(ctx context.Context, c conn, k agentline.WidgetKey) error {
	origins, err := json.Marshal(k.AllowedOrigins)
	if err != nil {
		return err
	}
	res, err := c.exec(ctx,
		`UPDATE widget_keys SET allowed_origins = ?, rate_limit_per_minute = ?, rate_limit_per_day = ? WHERE project_id = ? AND channel_id = ?`,
		string(origins), k.RateLimitPerMinute, k.RateLimitPerDay, k.ProjectID, k.ChannelID)
	return mustAffect(res, err, "key")
}

// DeleteWidgetKey revokes a channel's key.
func (db *DB) DeleteWidgetKey(ctx context.Context, projectID, channelID int64) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `DELETE FROM widget_keys WHERE project_id = ? AND channel_id = ?`, projectID, channelID)
		if err := mustAffect(res, err, "key"); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, "widget_key.revoke", "widget_key", channelID, nil))
	})
}

// TouchWidgetKey records when a key was last used. Callers batch it.
func (db *DB) TouchWidgetKey(ctx context.Context, keyID int64, at time.Time) error {
	_, err := db.writer().exec(ctx, `UPDATE widget_keys SET last_used_at = ? WHERE id = ?`, at.UTC(), keyID)
	return err
}
