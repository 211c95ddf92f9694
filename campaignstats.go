package agentline

// CampaignStat sums the dials one campaign made in a range (by when each
// was dialed), for the analytics: what became of them, how the analysis
// judged the conversations of the answered ones, and how long the calls
// lasted. A dial counts under its outcome once its call has ended (a dial
// still live is only dialed).
type CampaignStat struct {
	CampaignID int64  `json:"campaign_id"`
	Name       string `json:"name"`
	Dialed     int64  `json:"dialed"`
	// Answered counts the calls a person answered (outcome completed, or
	// the person opted out on the call); a machine's answer is Voicemail.
	Answered  int64 `json:"answered"`
	Voicemail int64 `json:"voicemail"`
	Busy      int64 `json:"busy"`
	NoAnswer  int64 `json:"no_answer"`
	Failed    int64 `json:"failed"`
	// OptedOut counts the calls on which the person asked not to be
	// called again (the opt_out tool).
	OptedOut int64 `json:"opted_out"`
	// Evaluated counts the dials' conversations whose analysis judged
	// success, Successes the successful ones; SuccessRate is their ratio
	// (null when none was evaluated).
	Evaluated   int64    `json:"evaluated"`
	Successes   int64    `json:"successes"`
	SuccessRate *float64 `json:"success_rate"`
	// Minutes sums the durations of the dials' calls.
	Minutes float64 `json:"minutes"`
}
