/**
 * DICOM PS3.15 Annex E, Table E.1-1: the Basic Application Level Confidentiality Profile, for the
 * attributes files most often carry. Where the standard offers a choice (X/Z, Z/D, X/Z/D) we take
 * Z for attributes that are type 2 in the common image IODs (so the file stays valid) and X for the
 * rest. Attributes not listed are kept; private tags, overlays (60xx) and curves (50xx) are removed
 * by the caller (see dicom.ts).
 */

/** D replace with a dummy, Z empty, X remove, K keep, U replace the UID consistently within the file. */
export type ProfileAction = "D" | "Z" | "X" | "K" | "U"

/** What kind of identifying information an attribute holds: names the finding and the token type. */
export type ProfileCategory = "patient" | "person" | "date" | "institution" | "identifier" | "free_text" | "device" | "reference" | "image" | "uid"

export interface ProfileRule {
  readonly action: ProfileAction
  readonly category: ProfileCategory
}

const rules: ReadonlyArray<readonly [tag: string, action: ProfileAction, category: ProfileCategory]> = [
  // Patient
  ["00100010", "Z", "patient"], // PatientName
  ["00100020", "Z", "patient"], // PatientID
  ["00100021", "X", "patient"], // IssuerOfPatientID
  ["00100030", "Z", "patient"], // PatientBirthDate
  ["00100032", "X", "patient"], // PatientBirthTime
  ["00100040", "Z", "patient"], // PatientSex
  ["00100050", "X", "patient"], // PatientInsurancePlanCodeSequence
  ["00101000", "X", "patient"], // OtherPatientIDs
  ["00101001", "X", "patient"], // OtherPatientNames
  ["00101002", "X", "patient"], // OtherPatientIDsSequence
  ["00101005", "X", "patient"], // PatientBirthName
  ["00101010", "X", "patient"], // PatientAge
  ["00101020", "X", "patient"], // PatientSize
  ["00101030", "X", "patient"], // PatientWeight
  ["00101040", "X", "patient"], // PatientAddress
  ["00101060", "X", "patient"], // PatientMotherBirthName
  ["00101080", "X", "patient"], // MilitaryRank
  ["00101081", "X", "patient"], // BranchOfService
  ["00101090", "X", "patient"], // MedicalRecordLocator
  ["00102000", "X", "patient"], // MedicalAlerts
  ["00102110", "X", "patient"], // Allergies
  ["00102150", "X", "patient"], // CountryOfResidence
  ["00102152", "X", "patient"], // RegionOfResidence
  ["00102154", "X", "patient"], // PatientTelephoneNumbers
  ["00102160", "X", "patient"], // EthnicGroup
  ["00102180", "X", "patient"], // Occupation
  ["001021A0", "X", "patient"], // SmokingStatus
  ["001021B0", "X", "patient"], // AdditionalPatientHistory
  ["001021C0", "X", "patient"], // PregnancyStatus
  ["001021D0", "X", "patient"], // LastMenstrualDate
  ["001021F0", "X", "patient"], // PatientReligiousPreference
  ["00104000", "X", "patient"], // PatientComments
  ["00380010", "X", "patient"], // AdmissionID
  ["00380300", "X", "patient"], // CurrentPatientLocation
  ["00380400", "X", "patient"], // PatientInstitutionResidence
  ["00380500", "X", "patient"], // PatientState
  ["00384000", "X", "patient"], // VisitComments
  // People other than the patient
  ["00080090", "Z", "person"], // ReferringPhysicianName
  ["00080092", "X", "person"], // ReferringPhysicianAddress
  ["00080094", "X", "person"], // ReferringPhysicianTelephoneNumbers
  ["00080096", "X", "person"], // ReferringPhysicianIdentificationSequence
  ["0008009C", "X", "person"], // ConsultingPhysicianName
  ["00081048", "X", "person"], // PhysiciansOfRecord
  ["00081050", "X", "person"], // PerformingPhysicianName
  ["00081060", "X", "person"], // NameOfPhysiciansReadingStudy
  ["00081070", "X", "person"], // OperatorsName
  ["00321032", "X", "person"], // RequestingPhysician
  ["0040A123", "D", "person"], // PersonName
  ["40080114", "X", "person"], // PhysicianApprovingInterpretation
  // Dates and times
  ["00080012", "X", "date"], // InstanceCreationDate
  ["00080013", "X", "date"], // InstanceCreationTime
  ["00080020", "Z", "date"], // StudyDate
  ["00080021", "X", "date"], // SeriesDate
  ["00080022", "X", "date"], // AcquisitionDate
  ["00080023", "Z", "date"], // ContentDate
  ["00080024", "X", "date"], // OverlayDate
  ["00080025", "X", "date"], // CurveDate
  ["0008002A", "X", "date"], // AcquisitionDateTime
  ["00080030", "Z", "date"], // StudyTime
  ["00080031", "X", "date"], // SeriesTime
  ["00080032", "X", "date"], // AcquisitionTime
  ["00080033", "Z", "date"], // ContentTime
  ["00080034", "X", "date"], // OverlayTime
  ["00080035", "X", "date"], // CurveTime
  ["00080201", "X", "date"], // TimezoneOffsetFromUTC
  ["00400244", "X", "date"], // PerformedProcedureStepStartDate
  ["00400245", "X", "date"], // PerformedProcedureStepStartTime
  // Institution and place
  ["00080080", "X", "institution"], // InstitutionName
  ["00080081", "X", "institution"], // InstitutionAddress
  ["00080082", "X", "institution"], // InstitutionCodeSequence
  ["00081010", "X", "institution"], // StationName
  ["00081040", "X", "institution"], // InstitutionalDepartmentName
  ["00321033", "X", "institution"], // RequestingService
  ["00400241", "X", "institution"], // PerformedStationAETitle
  ["00400242", "X", "institution"], // PerformedStationName
  ["00400243", "X", "institution"], // PerformedLocation
  // Identifiers of the study and its orders
  ["00080050", "Z", "identifier"], // AccessionNumber
  ["00200010", "Z", "identifier"], // StudyID
  ["00400253", "X", "identifier"], // PerformedProcedureStepID
  ["00401001", "X", "identifier"], // RequestedProcedureID
  ["00402016", "Z", "identifier"], // PlacerOrderNumberImagingServiceRequest
  ["00402017", "Z", "identifier"], // FillerOrderNumberImagingServiceRequest
  // Free text
  ["00081030", "X", "free_text"], // StudyDescription
  ["0008103E", "X", "free_text"], // SeriesDescription
  ["00081080", "X", "free_text"], // AdmittingDiagnosesDescription
  ["00082111", "X", "free_text"], // DerivationDescription
  ["00084000", "X", "free_text"], // IdentifyingComments
  ["00181030", "X", "free_text"], // ProtocolName
  ["00181400", "X", "free_text"], // AcquisitionDeviceProcessingDescription
  ["00184000", "X", "free_text"], // AcquisitionComments
  ["00204000", "X", "free_text"], // ImageComments
  ["00321060", "X", "free_text"], // RequestedProcedureDescription
  ["00321070", "X", "free_text"], // RequestedContrastAgent
  ["00324000", "X", "free_text"], // StudyComments
  ["00400254", "X", "free_text"], // PerformedProcedureStepDescription
  ["40000010", "X", "free_text"], // Arbitrary
  ["40004000", "X", "free_text"], // TextComments
  ["0040A730", "X", "free_text"], // ContentSequence
  // Devices
  ["00181000", "X", "device"], // DeviceSerialNumber
  ["0018700A", "X", "device"], // DetectorID
  // Sequences that point at other identified objects
  ["00081110", "X", "reference"], // ReferencedStudySequence
  ["00081111", "X", "reference"], // ReferencedPerformedProcedureStepSequence
  ["00081120", "X", "reference"], // ReferencedPatientSequence
  ["00081140", "X", "reference"], // ReferencedImageSequence
  ["00400275", "X", "reference"], // RequestAttributesSequence
  ["00400555", "X", "reference"], // AcquisitionContextSequence
  ["04000561", "X", "reference"], // OriginalAttributesSequence
  ["FFFAFFFA", "X", "reference"], // DigitalSignaturesSequence
  // Images inside the header: an icon can show the same burned-in text as the frame
  ["00880200", "X", "image"], // IconImageSequence
  // UIDs
  ["00080014", "U", "uid"], // InstanceCreatorUID
  ["00080018", "U", "uid"], // SOPInstanceUID
  ["00081155", "U", "uid"], // ReferencedSOPInstanceUID
  ["00181002", "U", "uid"], // DeviceUID
  ["0020000D", "U", "uid"], // StudyInstanceUID
  ["0020000E", "U", "uid"], // SeriesInstanceUID
  ["00200052", "U", "uid"], // FrameOfReferenceUID
  ["00200200", "U", "uid"], // SynchronizationFrameOfReferenceUID
  ["00209161", "U", "uid"], // ConcatenationUID
  ["00209164", "U", "uid"], // DimensionOrganizationUID
  ["0040A124", "U", "uid"], // UID
  ["00880140", "U", "uid"], // StorageMediaFileSetUID
  ["30060024", "U", "uid"], // ReferencedFrameOfReferenceUID
  ["300600C2", "U", "uid"], // RelatedFrameOfReferenceUID
  ["00020003", "U", "uid"], // MediaStorageSOPInstanceUID (file meta; must follow SOPInstanceUID)
  // File meta
  ["00020016", "X", "institution"], // SourceApplicationEntityTitle
]

/** Rules by dcmjs tag key (8 upper-case hex digits). */
export const profile: ReadonlyMap<string, ProfileRule> = new Map(rules.map(([tag, action, category]) => [tag, { action, category }]))

/** Attributes set on every de-identified file (PS3.15 E.1.1). */
export const PATIENT_IDENTITY_REMOVED = "00120062"
export const DEIDENTIFICATION_METHOD = "00120063"
export const DEIDENTIFICATION_METHOD_CODES = "00120064"
