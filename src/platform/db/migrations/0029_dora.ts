/**
 * DORA: incidents (with their classification, the stored report PDF and its signature), the ICT
 * third-party register and resilience tests. Every table carries org_uuid, so deleting an
 * organization removes them; `seq` orders rows made in the same millisecond (newest first).
 * Related actions are a list of ids (no foreign key: actions may be deleted with their
 * organization first).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE dora_incidents (
      uuid TEXT PRIMARY KEY,
      seq BIGSERIAL NOT NULL,
      org_uuid TEXT NOT NULL,
      title TEXT NOT NULL,
      description TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('detected', 'classified', 'resolved', 'reported')),
      severity TEXT CHECK (severity IN ('critical', 'high', 'medium', 'low')),
      category TEXT,
      is_major BOOLEAN NOT NULL DEFAULT false,
      classification_basis TEXT CHECK (classification_basis IN ('explicit', 'rts_criteria', 'severity')),
      criteria JSONB,
      rts_assessment JSONB,
      became_major_at TIMESTAMPTZ,
      detected_at TIMESTAMPTZ NOT NULL,
      classified_at TIMESTAMPTZ,
      resolved_at TIMESTAMPTZ,
      reported_at TIMESTAMPTZ,
      clients_affected_count BIGINT NOT NULL DEFAULT 0,
      affected_services JSONB NOT NULL DEFAULT '[]',
      geographic_scope JSONB NOT NULL DEFAULT '[]',
      root_cause_summary TEXT,
      root_cause_classification TEXT,
      third_party_uuid TEXT,
      resolution_summary TEXT,
      lessons_learned TEXT,
      related_action_uuids JSONB NOT NULL DEFAULT '[]',
      report_pdf BYTEA,
      report_content_hash TEXT,
      report_signature TEXT,
      report_signing_key_id TEXT,
      report_signed_at TIMESTAMPTZ,
      report_pdf_size_bytes INTEGER,
      warnings JSONB NOT NULL DEFAULT '[]',
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX dora_incidents_org_idx ON dora_incidents (org_uuid, detected_at DESC, seq DESC)`
  yield* sql`
    CREATE TABLE dora_third_parties (
      uuid TEXT PRIMARY KEY,
      seq BIGSERIAL NOT NULL,
      org_uuid TEXT NOT NULL,
      vendor_name TEXT NOT NULL,
      service_description TEXT NOT NULL,
      service_type TEXT NOT NULL,
      criticality TEXT NOT NULL CHECK (criticality IN ('critical', 'non_critical', 'supporting')),
      contract_start_date DATE,
      contract_end_date DATE,
      exit_strategy_summary TEXT,
      subcontractors JSONB NOT NULL DEFAULT '[]',
      data_categories JSONB NOT NULL DEFAULT '[]',
      jurisdiction TEXT,
      is_active BOOLEAN NOT NULL DEFAULT true,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX dora_third_parties_org_idx ON dora_third_parties (org_uuid, created_at DESC, seq DESC)`
  yield* sql`
    CREATE TABLE dora_resilience_tests (
      uuid TEXT PRIMARY KEY,
      seq BIGSERIAL NOT NULL,
      org_uuid TEXT NOT NULL,
      test_type TEXT NOT NULL,
      title TEXT NOT NULL,
      scope TEXT NOT NULL,
      conducted_at TEXT NOT NULL,
      conducted_at_instant TIMESTAMPTZ NOT NULL,
      conducted_by TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'partial')),
      findings_summary TEXT,
      remediation_plan TEXT,
      remediation_due_at TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX dora_resilience_tests_org_idx ON dora_resilience_tests (org_uuid, conducted_at_instant DESC, seq DESC)`
})
