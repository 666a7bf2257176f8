CREATE TABLE runs (
	id VARCHAR NOT NULL, 
	created_at VARCHAR NOT NULL, 
	spec_json VARCHAR NOT NULL, 
	manifest_json VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE forecasts (
	id INTEGER NOT NULL, 
	run_id VARCHAR NOT NULL, 
	forecaster VARCHAR NOT NULL, 
	market_id VARCHAR NOT NULL, 
	t0 VARCHAR NOT NULL, 
	label VARCHAR NOT NULL, 
	repeat INTEGER NOT NULL, 
	probability FLOAT, 
	error VARCHAR, 
	rationale VARCHAR NOT NULL, 
	evidence_json VARCHAR NOT NULL, 
	usage_json VARCHAR NOT NULL, 
	retrievals_json VARCHAR NOT NULL, 
	raw VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT one_forecast UNIQUE (run_id, forecaster, market_id, t0, repeat), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_forecasts_run_id ON forecasts (run_id);
CREATE TABLE coverage (
	run_id VARCHAR NOT NULL, 
	market_id VARCHAR NOT NULL, 
	t0 VARCHAR NOT NULL, 
	n_relevant INTEGER NOT NULL, 
	stratum VARCHAR NOT NULL, 
	PRIMARY KEY (run_id, market_id, t0), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
