// @ts-check
// The shapes of the management API's answers, as the console reads them
// (docs/openapi.yaml has them whole). Types only: no code here, and the
// modules take them with `@import`, so the bundle never includes this file.

/** @typedef {"owner" | "editor" | "viewer"} Role */
/** @typedef {"openai" | "gemini"} Provider */

/**
 * @typedef {object} User
 * @property {number} id
 * @property {string} email
 * @property {boolean} [admin]
 * @property {boolean} [disabled]
 * @property {string} created_at
 */

/**
 * @typedef {object} Features
 * @property {boolean} telephony_enabled
 * @property {boolean} openai_configured
 * @property {boolean} gemini_configured
 * @property {boolean} sandbox
 * @property {boolean} sandbox_carrier
 * @property {boolean} [mail_enabled]
 */

/** @typedef {{user: User, features: Features}} Me */
/** @typedef {{token: string, expires_at: string, user: User}} Login */
/** @typedef {{message: string, email?: string}} Message */

/**
 * @typedef {object} Project
 * @property {number} id
 * @property {string} name
 * @property {{display_name?: string, logo_url?: string}} [branding]
 * @property {number} recording_retention_days
 * @property {Role} [role]
 * @property {string} created_at
 */

/** @typedef {{project_id: number, user_id: number, email: string, role: Role, created_at: string}} Member */

/**
 * @typedef {object} Invite An invitation; delivery "link" answers carry
 * its link (url) once, when it is made.
 * @property {number} id
 * @property {number} project_id
 * @property {string} email
 * @property {Role} role
 * @property {string} expires_at
 * @property {"email" | "link"} [delivery]
 * @property {string} [url]
 */

/**
 * @typedef {object} InviteDetails
 * @property {string} email
 * @property {Role} role
 * @property {number} project_id
 * @property {string} project_name
 * @property {string} invited_by
 * @property {string} expires_at
 */

/** @typedef {{user_id: number, email: string, expires_at: string, delivery: "email" | "link", url?: string}} PasswordReset */

/**
 * @typedef {object} AnalysisSettings
 * @property {boolean} summary
 * @property {string} success_criteria
 * @property {JSONSchema | null} data_schema
 */

/**
 * @typedef {object} JSONSchema A JSON Schema object, as far as the
 * builders read one.
 * @property {string} [type]
 * @property {Record<string, JSONSchema>} [properties]
 * @property {string[]} [required]
 * @property {unknown[]} [enum]
 * @property {string} [description]
 */

/**
 * @typedef {object} Agent
 * @property {number} id
 * @property {number} project_id
 * @property {string} name
 * @property {string} instructions
 * @property {string} greeting
 * @property {string} model
 * @property {Provider} provider
 * @property {string} voice
 * @property {string} language
 * @property {string} transfer_number
 * @property {boolean} record_calls
 * @property {AnalysisSettings} analysis
 * @property {number} version the latest version of the settings (what the editor shows)
 * @property {number} published_version the version channels, numbers and campaigns run
 * @property {boolean} review_before_publish saves stay drafts until one is published
 * @property {string} updated_at
 */

/**
 * @typedef {object} AgentVersion One immutable, numbered state of an agent's settings.
 * @property {number} agent_id
 * @property {number} version
 * @property {boolean} published
 * @property {Record<string, unknown>} settings
 * @property {string} created_at
 * @property {VersionDiff} [diff] with getVersion's diff only
 */

/**
 * @typedef {object} VersionDiff How version to differs from version from, field by field.
 * @property {number} from
 * @property {number} to
 * @property {{field: string, from: unknown, to: unknown}[]} changes
 */

/** @typedef {{versions: AgentVersion[], next_cursor: string | null}} VersionPage */

/**
 * @typedef {object} Catalog What agents may be set to, the webhook
 * event types and a new campaign's defaults (getCatalog).
 * @property {{name: string, provider: Provider}[]} models
 * @property {{name: string, provider: Provider, realtime_voice: string}[]} voices
 * @property {Record<Provider, string>} default_voices
 * @property {string} default_model
 * @property {string[]} event_types
 * @property {Pick<Campaign, "calling_window" | "max_concurrent_calls" | "calls_per_second" | "max_attempts" | "retry_after" |
 *   "voicemail">} campaign_defaults the settings a new campaign takes for those its create request leaves out
 */

/**
 * @typedef {object} TestScenario A simulated person and what it must get.
 * @property {number} id
 * @property {number} agent_id
 * @property {string} name
 * @property {string} persona
 * @property {string} goal
 * @property {string} success_criteria
 * @property {number} max_turns
 * @property {Record<string, string>} variables
 */

/**
 * @typedef {object} TestToolUse A tool call the agent made in a scenario.
 * @property {string} name
 * @property {unknown} arguments
 * @property {string} result
 * @property {boolean} is_error
 */

/**
 * @typedef {object} TestResult One scenario of a run.
 * @property {number} id
 * @property {number} scenario_id
 * @property {string} scenario_name
 * @property {"pending" | "passed" | "failed" | "error"} status
 * @property {boolean | null} passed
 * @property {string} reason
 * @property {{speaker: string, text: string, at: string}[]} transcript
 * @property {number} turns
 * @property {TestToolUse[]} tool_calls
 * @property {number[]} turn_ms
 */

/**
 * @typedef {object} TestRun A run of an agent's scenarios.
 * @property {number} id
 * @property {number | null} version
 * @property {"running" | "completed"} status
 * @property {number} passed
 * @property {number} failed
 * @property {number} errors
 * @property {string} created_at
 * @property {string | null} finished_at
 * @property {TestResult[]} [results]
 * @property {{previous_run_id: number, scenarios: {scenario_id: number, name: string, previous: string, current: string, changed: boolean}[]}} [comparison]
 */

/** @typedef {{test_runs: TestRun[], next_cursor: string | null}} TestRunPage */

/**
 * @typedef {object} Tool A webhook tool of an agent, or an MCP server whose tools it offers.
 * @property {number} id
 * @property {"webhook" | "mcp"} type
 * @property {string} name
 * @property {string} description
 * @property {JSONSchema} parameters
 * @property {string} url
 * @property {"GET" | "POST" | ""} method
 * @property {Record<string, string>} headers names with masked values
 * @property {string[]} allowed_tools an MCP server's tools to offer; empty: all
 */

/**
 * @typedef {object} MCPListing An MCP server's tools as the model sees them, or why there are none.
 * @property {{name: string, model_name: string, description: string}[]} tools
 * @property {{code: string, message: string}} [error]
 */

/** @typedef {{id: number, title: string, content_type: string, bytes: number, chunks: number}} KnowledgeDocument */
/** @typedef {{query: string, results: {document_id: number, title: string, text: string, score: number}[]}} KnowledgeSearch */

/**
 * @typedef {object} FormField
 * @property {string} name
 * @property {string} label
 * @property {"text" | "email" | "tel" | "textarea" | "select" | "checkbox"} type
 * @property {boolean} [required]
 * @property {string[]} [options]
 */

/**
 * @typedef {object} FormSettings
 * @property {"lead_capture" | "live_chat"} mode
 * @property {FormField[]} fields
 * @property {string} submit_label
 * @property {string} thank_you_message
 * @property {string} notify_url
 */

/**
 * @typedef {object} ChannelSettings
 * @property {string} color
 * @property {"bottom-right" | "bottom-left"} position
 * @property {boolean} show_transcript
 * @property {boolean} show_text_chat
 * @property {FormSettings} [form] a form channel's form
 */

/**
 * @typedef {object} Channel
 * @property {number} id
 * @property {number | null} agent_id
 * @property {"voice_widget" | "form"} type
 * @property {string} name
 * @property {ChannelSettings} settings
 */

/**
 * @typedef {object} WidgetKey A channel's key, by its prefix only.
 * @property {string} prefix
 * @property {string[]} allowed_origins
 * @property {number} rate_limit_per_minute
 * @property {number | null} rate_limit_per_day
 * @property {string} created_at
 * @property {string | null} last_used_at
 */

/** @typedef {WidgetKey & {key: string}} CreatedWidgetKey */
/** @typedef {{script: string, script_mount: string, iframe: string}} Snippets */
/** @typedef {Record<string, string | boolean>} Answers */

/**
 * @typedef {object} Lead
 * @property {number} id
 * @property {number} channel_id
 * @property {"lead_capture" | "live_chat"} mode
 * @property {Answers} answers
 * @property {string | null} session_id
 * @property {number | null} agent_id
 * @property {string} created_at
 */

/** @typedef {Lead & {session: {transcript: {role: string, text: string}[]} | null}} LeadDetail */
/** @typedef {{leads: Lead[], next_offset?: number | null}} LeadPage */
/** @typedef {{mode: string, lead_id: number}} FormSubmitAnswer */

/** @typedef {{speaker: "user" | "agent", text: string, at: string, latency_ms?: number}} TranscriptLine */
/** @typedef {{p50_ms: number, p95_ms: number, max_ms: number, turns: number}} TurnLatency */

/**
 * @typedef {object} ToolCall A tool call of a conversation.
 * @property {string} call_id
 * @property {string} name
 * @property {unknown} arguments
 * @property {string} result
 * @property {boolean} is_error
 * @property {number | null} [duration_ms]
 * @property {string} at
 */

/**
 * @typedef {object} Analysis
 * @property {"pending" | "done" | "failed" | "skipped"} status
 * @property {string} [summary]
 * @property {boolean | null} [success]
 * @property {string} [success_reason]
 * @property {Record<string, unknown> | null} [data]
 * @property {string} [model]
 * @property {string} [error]
 * @property {string | null} [finished_at]
 */

/**
 * @typedef {object} Recording
 * @property {string} status
 * @property {number} duration_ms
 * @property {number} size_bytes
 * @property {string} [url] where to GET it, while it is stored
 */

/**
 * @typedef {object} Conversation A widget session, live chat or phone call.
 * @property {string} id
 * @property {number} agent_id
 * @property {number | null} [agent_version] the agent version it ran; null before versions began
 * @property {"widget" | "live_chat" | "phone"} kind
 * @property {number | null} [channel_id]
 * @property {number | null} [number_id]
 * @property {string} [direction] calls only: inbound, outbound or test
 * @property {string} [from]
 * @property {string} [to]
 * @property {"live" | "ended" | "abandoned" | "failed"} status
 * @property {string} started_at
 * @property {string | null} [ended_at]
 * @property {number} duration_ms
 * @property {string} [end_reason]
 * @property {TranscriptLine[]} [transcript]
 * @property {TurnLatency | null} [latency]
 * @property {ToolCall[]} [tool_calls]
 * @property {Analysis | null} [analysis]
 * @property {Recording | null} [recording]
 * @property {{answers: Answers} | null} [lead]
 */

/** @typedef {{conversations: Conversation[], next_cursor?: string | null}} ConversationPage */

/**
 * @typedef {object} ConversationTotals One row of the analytics, with the
 * key of its group (day, kind, agent_id, channel or end_reason).
 * @property {number} conversations
 * @property {number} minutes
 * @property {number} tool_calls
 * @property {number} tool_errors
 * @property {number} [leads]
 * @property {number} [evaluated]
 * @property {number | null} [success_rate]
 * @property {string} [day]
 * @property {string} [kind]
 * @property {number} [agent_id]
 * @property {string} [channel]
 * @property {string} [end_reason]
 */

/**
 * @typedef {object} CampaignStat What one campaign's dials in the range came
 * to (docs/api.md, analytics).
 * @property {number} campaign_id
 * @property {string} name
 * @property {number} dialed
 * @property {number} answered by a person
 * @property {number} voicemail
 * @property {number} busy
 * @property {number} no_answer
 * @property {number} failed
 * @property {number} opted_out
 * @property {number} evaluated
 * @property {number} successes
 * @property {number | null} success_rate
 * @property {number} minutes
 */

/**
 * @typedef {object} Analytics
 * @property {string} from
 * @property {string} to
 * @property {{totals: ConversationTotals, by_day: ConversationTotals[], by_kind: ConversationTotals[],
 *   by_agent: ConversationTotals[], by_channel: ConversationTotals[], end_reasons: ConversationTotals[],
 *   turn_latency?: (TurnLatency & {day: string, agent_id: number})[]}} conversations
 * @property {CampaignStat[]} [campaigns] absent from a server older than campaigns
 */

/**
 * @typedef {object} WebhookEndpoint
 * @property {number} id
 * @property {string} url
 * @property {string} description
 * @property {string[]} events
 * @property {boolean} enabled
 * @property {string} disabled_reason
 * @property {string} [previous_secret_until]
 * @property {string} [failing_since]
 */

/** @typedef {WebhookEndpoint & {secret: string}} WebhookEndpointWithSecret */
/** @typedef {{at: string, status_code: number, latency_ms: number, response?: string, error?: string}} WebhookAttempt */

/**
 * @typedef {object} Delivery A webhook delivery of one event to one endpoint.
 * @property {number} id
 * @property {string} event_id
 * @property {string} event_type
 * @property {"pending" | "delivered" | "failed"} status
 * @property {number} attempt_count
 * @property {number} [last_status_code]
 * @property {string} created_at
 * @property {WebhookAttempt[]} [attempts]
 * @property {string} [webhook_url] in a conversation's deliveries
 */

/**
 * @typedef {object} NotifyAttempt One try at posting a lead to its form's notify URL.
 * @property {number} lead_id
 * @property {number} attempt
 * @property {number} max_attempts
 * @property {boolean} delivered
 * @property {number} status_code
 * @property {string} [error]
 * @property {number} latency_ms
 * @property {string} at
 */

/**
 * @typedef {object} PhoneNumber
 * @property {number} id
 * @property {string} phone_number
 * @property {number | null} agent_id
 * @property {string} status
 */

/** @typedef {{phone_number: string, locality?: string, region?: string}} AvailableNumber */
/** @typedef {{call_sid: string, status: string}} OutboundCall */

/**
 * @typedef {object} Call A phone call with its log.
 * @property {string} call_sid
 * @property {string} direction
 * @property {string} from
 * @property {string} to
 * @property {string} status
 * @property {string} [end_reason]
 * @property {string | null} started_at
 * @property {string | null} ended_at
 * @property {number | null} duration_s
 * @property {{type: string, role?: string, text: string, data?: Record<string, unknown>}[]} events
 */

/**
 * @typedef {object} TestCall A browser test call just recorded.
 * @property {string} call_sid
 * @property {string} conversation_id
 * @property {string} stream_url
 * @property {string} token
 */

/** @typedef {"draft" | "running" | "paused" | "completed" | "cancelled"} CampaignStatus */
/** @typedef {"pending" | "calling" | "completed" | "voicemail" | "busy" | "no_answer" | "failed" | "opted_out" | "do_not_call"} ContactStatus */
/** @typedef {{days: string[], start: string, end: string}} CallingWindow in each callee's local time: days mon … sun, start to end ("HH:MM", end excluded) */
/** @typedef {Record<"total" | ContactStatus, number>} CampaignCounts a campaign's contacts by status */

/**
 * @typedef {object} Campaign A list of people an agent calls from its number.
 * @property {number} id
 * @property {number} project_id
 * @property {number} agent_id
 * @property {string} name
 * @property {CampaignStatus} status
 * @property {CallingWindow} calling_window
 * @property {number} max_concurrent_calls
 * @property {number} calls_per_second
 * @property {number} max_attempts
 * @property {string} retry_after a duration, such as "1h" or "30m"
 * @property {{action: "hang_up" | "leave_message", message?: string}} voicemail
 * @property {CampaignCounts} counts
 * @property {string} created_at
 * @property {string} updated_at
 * @property {string | null} started_at
 * @property {string | null} finished_at
 */
/** @typedef {{campaigns: Campaign[], next_cursor: string | null}} CampaignPage */
/** @typedef {{conversation_id: string, outcome: string, success: boolean | null, summary: string}} ContactOutcome a contact's last dial, with its analysis once it ran */

/**
 * @typedef {object} CampaignContact One person a campaign calls.
 * @property {number} id
 * @property {number} campaign_id
 * @property {string} phone_number
 * @property {string} timezone "" when the zones of its number apply
 * @property {Record<string, string> | null} variables
 * @property {{source: string, at?: string} | null} consent
 * @property {ContactStatus} status
 * @property {number} attempts
 * @property {string | null} next_attempt_at
 * @property {string[] | null} conversation_ids its dials' conversations, first first
 * @property {ContactOutcome | null} last_outcome
 * @property {string} created_at
 */
/** @typedef {{contacts: CampaignContact[], next_cursor: string | null}} ContactPage */

/**
 * @typedef {{added: number, duplicates: number, do_not_call: number, errors: {line: number, message: string}[]}} ContactUpload
 * An upload's answer: the contacts stored (do_not_call of them on the
 * project's list), the rows that repeated a number, the refused rows by line.
 */

/** @typedef {{phone_number: string, reason: string, created_at: string}} DoNotCall a number no campaign of the project dials */
/** @typedef {{items: DoNotCall[], next_cursor: string | null}} DoNotCallPage */
/** @typedef {{kind: "openai" | "gemini", base_url: string, key_last4: string, updated_at: string}} ProviderAccount a project's own account with a provider kind; never its key */

export {};
/** @typedef {{id: number, project_id: number, name: string, role: string, prefix: string, created_at: string, expires_at: string | null, revoked_at: string | null, last_used_at: string | null, key?: string}} APIKey a project's key for automation; key only in its creation's answer */
/** @typedef {{kind: "user" | "api_key" | "system", id?: number, email?: string, key_prefix?: string}} AuditActor who made a change: a person, a key (by its prefix) or agentline itself */
/** @typedef {{id: number, at: string, actor: AuditActor, action: string, resource: {kind: string, id?: string}, project_id?: number, changes?: Record<string, [unknown, unknown]>, client_ip?: string, request_id?: string}} AuditEntry one line of the audit log; secrets show as "[masked]" */
/** @typedef {{entries: AuditEntry[], next_cursor: string | null}} AuditPage */
