-- 018: why a claim is held for a person (a policy's challenge, a claim its record had no
-- room for, a possible duplicate), in words: what `TurnReport.why` and the event said, kept
-- for the operator who reviews it later. Rows held before this step read ''.

ALTER TABLE possible_duplicates ADD COLUMN why TEXT NOT NULL DEFAULT '';
